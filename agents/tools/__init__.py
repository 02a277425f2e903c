"""The pharmacy's tools, one module per family."""
