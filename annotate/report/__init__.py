"""What the clinician labels add to a run's report: the sections (Table 12, the seed-003
validations) and the κ plots, for `paw report` and the Statistics screen."""
