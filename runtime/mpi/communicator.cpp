#include "mpi/communicator.hpp"

#include <climits>
#include <numeric>

#include "ptxrt/core/error.hpp"

namespace ptxrt::mpi::detail {

void check(int result, std::string_view call) {
  if (result == MPI_SUCCESS) [[likely]]
    return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(result, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(ErrorKind::io,
              std::string(call) + " failed: " + (length > 0 ? std::string(text, length) : "?"),
              std::string(call), result);
}

Communicator::Communicator(MPI_Comm parent) {
  check(MPI_Comm_dup(parent, &communicator_), "MPI_Comm_dup");
  check(MPI_Comm_set_errhandler(communicator_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(communicator_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(communicator_, &size_), "MPI_Comm_size");
}

Communicator::~Communicator() { MPI_Comm_free(&communicator_); }

void Communicator::barrier() const { check(MPI_Barrier(communicator_), "MPI_Barrier"); }

std::uint64_t Communicator::all_reduce(std::uint64_t value, MPI_Op operation) const {
  std::uint64_t result = 0;
  check(MPI_Allreduce(&value, &result, 1, MPI_UINT64_T, operation, communicator_), "MPI_Allreduce");
  return result;
}

double Communicator::all_reduce(double value, MPI_Op operation) const {
  double result = 0.0;
  check(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, operation, communicator_), "MPI_Allreduce");
  return result;
}

std::vector<std::uint64_t> Communicator::all_reduce(const std::vector<std::uint64_t>& values,
                                                    MPI_Op operation) const {
  std::vector<std::uint64_t> result(values.size());
  check(MPI_Allreduce(values.data(), result.data(), count_of(values.size()), MPI_UINT64_T,
                      operation, communicator_),
        "MPI_Allreduce");
  return result;
}

std::vector<std::string> Communicator::all_gather_text(const std::string& text) const {
  const std::vector<int> lengths = all_gather(count_of(text.size()));
  const std::vector<char> joined = all_gather(std::vector<char>(text.begin(), text.end()));
  std::vector<std::string> texts;
  std::size_t offset = 0;
  for (int length : lengths) {
    texts.emplace_back(joined.data() + offset, static_cast<std::size_t>(length));
    offset += static_cast<std::size_t>(length);
  }
  return texts;
}

int Communicator::count_of(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument,
                std::to_string(count) + " items in one message exceed MPI's count limit of " +
                    std::to_string(INT_MAX));
  return static_cast<int>(count);
}

std::vector<int> Communicator::offsets_of(const std::vector<int>& counts) {
  std::vector<int> offsets(counts.size());
  std::size_t offset = 0;
  for (std::size_t rank = 0; rank < counts.size(); ++rank) {
    offsets[rank] = count_of(offset);
    offset += static_cast<std::size_t>(counts[rank]);
  }
  return offsets;
}

std::size_t Communicator::total_of(const std::vector<int>& counts) {
  return std::accumulate(
      counts.begin(), counts.end(), std::size_t{0},
      [](std::size_t sum, int count) { return sum + static_cast<std::size_t>(count); });
}

Communicator::Type::Type(std::size_t bytes) {
  check(MPI_Type_contiguous(count_of(bytes), MPI_BYTE, &type_), "MPI_Type_contiguous");
  check(MPI_Type_commit(&type_), "MPI_Type_commit");
}

Communicator::Type::~Type() { MPI_Type_free(&type_); }

}  // namespace ptxrt::mpi::detail
