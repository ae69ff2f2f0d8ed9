#pragma once

__device__ inline float plus_offset(float value) { return value + 1.5f; }
