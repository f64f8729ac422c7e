"""The desktop app (PySide6). The only package allowed to import Qt; views observe models and own no experiment logic."""
