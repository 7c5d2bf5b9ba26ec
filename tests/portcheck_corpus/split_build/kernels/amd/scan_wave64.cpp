// Built only for ROCm: uses the wavefront size the device reports.
int lanes() { return warpSize; }
