#include "apps/matmul/product_check.hpp"

#include "apps/common/reference.hpp"

namespace ptxrt::apps {

namespace {

std::size_t at(long long row, long long column, long long columns) {
  return static_cast<std::size_t>(row * columns + column);
}

}  // namespace

ProductSamples sample_product(std::span<const float> a, std::span<const float> b, int m, int n,
                              int k, int count) {
  ProductSamples samples;
  for (unsigned i = 0; i < static_cast<unsigned>(count); ++i) {
    // Multiplicative hashes: rows and columns spread over C, the edges included at some sizes.
    const unsigned row = (i * 2654435761u) % static_cast<unsigned>(m);
    const unsigned column = (i * 40503u + 17u) % static_cast<unsigned>(n);
    double dot = 0.0;
    for (int q = 0; q < k; ++q)
      dot += static_cast<double>(a[at(row, q, k)]) * static_cast<double>(b[at(q, column, n)]);
    samples.indices.push_back(at(row, column, n));
    samples.expected.push_back(static_cast<float>(dot));
  }
  return samples;
}

double sampled_error(std::span<const float> c, const ProductSamples& samples) {
  std::vector<float> actual;
  for (const std::size_t index : samples.indices) actual.push_back(c[index]);
  return max_relative_error(actual, samples.expected);
}

std::optional<CublasProduct> cublas_product(const CublasAvailability& cublas,
                                            const Context& context, const DeviceBuffer<float>& a,
                                            const DeviceBuffer<float>& b, int m, int n, int k,
                                            const ProductSamples& samples) {
  if (!cublas.library) return std::nullopt;
  DeviceBuffer<float> c(context, static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  Cublas(cublas.library, context).sgemm_row_major(a, b, c, m, n, k);
  CublasProduct product{c.download(), 0.0};
  product.sampled_error = sampled_error(product.c, samples);
  return product;
}

}  // namespace ptxrt::apps
