"""SimLab: a simulator and visualiser for experiments where agents with partial views must talk to get a job done."""

__version__ = "0.1.0"
