"""Trust: who is signed in, passphrases and signing keys, sealed label values, and the
signed record that attests every row deciding an annotation result (below everything else
in annotate/ but the codebook)."""
