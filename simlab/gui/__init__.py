"""The desktop app (PySide6): the only package allowed to import Qt. Views observe models; no experiment logic."""
