"""PAW, the Perturbation Audit Workbench: the application (CLI, TUI, models, operators, audits)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
