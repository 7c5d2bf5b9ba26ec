// Built only when not ROCm (`if not SKIP_BUILD and not IS_HIP_EXTENSION`): reported as info.
#define WARP_SIZE 32  // expect: PC201 info
