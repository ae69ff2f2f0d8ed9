// The sphere record of raytrace.cu, as it lies in constant memory: seven floats, 28 bytes, no
// padding. host/reference.hpp declares a layout-identical struct (and static_asserts its size)
// so the host can copy an array of them straight into the `spheres` symbol.
#ifndef PTXRT_SPHERE_CUH
#define PTXRT_SPHERE_CUH

struct Sphere {
  float r, g, b;  // colour, each channel in [0, 1]
  float radius;
  float x, y, z;  // centre, in pixels from the image centre; the viewer looks down -z
};

#endif
