"""`paw verify`: the label chain, the signed record replayed entry by entry, and what each
label event says checked against the codebook, its case, its session and the clock."""
