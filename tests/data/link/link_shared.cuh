// What link_main.cu uses from link_math.cu: a device function, a function template, a device
// variable and a __constant__ table, each defined in link_math.cu only. Needs relocatable
// device code (a Program of both files, or link_main.cu with a device library of link_math.cu).
#pragma once

extern __device__ float scale_value(float value);
template <typename T>
__device__ T clamp_to(T value, T low, T high);
extern __device__ int launched_threads;
extern __constant__ float bias[4];
