// The library's own communicator: a duplicate of the caller's, so that its messages meet none of
// the caller's, with MPI's errors returned instead of fatal and checked in one place. Helpers for
// the few collectives the library uses, over values copied as bytes (every rank runs the same
// binary, so one layout serves all).
//
// One thread at a time (the one that created it).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ptxrt::mpi::detail {

// Throws Error (io) naming `call` and MPI's description of `result` unless it is MPI_SUCCESS.
void check(int result, std::string_view call);

class Communicator {
 public:
  // Collective over `parent`.
  explicit Communicator(MPI_Comm parent);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  MPI_Comm get() const noexcept { return communicator_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

  void barrier() const;

  std::uint64_t all_reduce(std::uint64_t value, MPI_Op operation) const;
  double all_reduce(double value, MPI_Op operation) const;
  // Element by element; every rank gives as many values.
  std::vector<std::uint64_t> all_reduce(const std::vector<std::uint64_t>& values,
                                        MPI_Op operation) const;

  // Every rank's `value`, by rank.
  template <typename T>
  std::vector<T> all_gather(const T& value) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> values(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&value, sizeof(T), MPI_BYTE, values.data(), sizeof(T), MPI_BYTE,
                        communicator_),
          "MPI_Allgather");
    return values;
  }

  // Every rank's `values`, concatenated by rank.
  template <typename T>
  std::vector<T> all_gather(const std::vector<T>& values) const {
    const std::vector<int> counts = all_gather(count_of(values.size()));
    std::vector<T> gathered(total_of(counts));
    const Type type(sizeof(T));
    check(MPI_Allgatherv(values.data(), counts[static_cast<std::size_t>(rank_)], type.get(),
                         gathered.data(), counts.data(), offsets_of(counts).data(), type.get(),
                         communicator_),
          "MPI_Allgatherv");
    return gathered;
  }

  // Every rank's text, by rank.
  std::vector<std::string> all_gather_text(const std::string& text) const;

  // Sends values[sum of counts before d, + counts[d]) to rank d, and returns what each rank sent
  // this one, concatenated by rank.
  template <typename T>
  std::vector<T> all_to_all(const std::vector<T>& values, const std::vector<int>& counts) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<int> incoming(static_cast<std::size_t>(size_));
    check(MPI_Alltoall(counts.data(), 1, MPI_INT, incoming.data(), 1, MPI_INT, communicator_),
          "MPI_Alltoall");
    std::vector<T> received(total_of(incoming));
    const Type type(sizeof(T));
    check(MPI_Alltoallv(values.data(), counts.data(), offsets_of(counts).data(), type.get(),
                        received.data(), incoming.data(), offsets_of(incoming).data(), type.get(),
                        communicator_),
          "MPI_Alltoallv");
    return received;
  }

  // A count as MPI's int, Error (invalid_argument) beyond it.
  static int count_of(std::size_t count);

 private:
  // A contiguous datatype of `bytes` bytes, committed, freed by the destructor.
  class Type {
   public:
    explicit Type(std::size_t bytes);
    ~Type();
    Type(const Type&) = delete;
    Type& operator=(const Type&) = delete;
    MPI_Datatype get() const noexcept { return type_; }

   private:
    MPI_Datatype type_ = MPI_DATATYPE_NULL;
  };

  // The offsets of blocks of `counts` laid end to end; Error (invalid_argument) past int.
  static std::vector<int> offsets_of(const std::vector<int>& counts);
  static std::size_t total_of(const std::vector<int>& counts);

  MPI_Comm communicator_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace ptxrt::mpi::detail
