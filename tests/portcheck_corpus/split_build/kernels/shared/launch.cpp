// Built for both vendors: a hard-coded warp of 32 stays an error here.
constexpr int kWarpSize = 32;  // expect: PC201 error
