"""The blocks world (CRAFT): three directors see one wall each of a target structure and guide a builder."""
