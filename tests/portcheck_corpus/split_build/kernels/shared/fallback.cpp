// Listed in an else branch that CUDA builds take too (SKIP_BUILD=1): not ROCm-only, and not CUDA-only either.
int fallback_width() { return 1; }
