"""Agreement between two raters, and between an automated decision and the clinicians:
Cohen's κ and Gwet's AC1 on one table, the label log folded into tables, the agreement
tables per field and stratum, and κ over the paired labels."""
