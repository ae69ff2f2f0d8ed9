// The best time of a tune spread over ranks (mpi/distributed_tune.cpp). Each rank offers the ok
// times it measures; a time better than any it knows goes to every other rank at once, by
// non-blocking sends, into a receive each rank keeps posted for every other, and is read before
// the next config (MPI_Test, which lets MPI make progress and then looks again). So no rank ever
// waits for another while it tunes; finish(), a collective, then receives what is still on its way
// (each rank learns how many messages were sent to it) and withdraws the posted receives, so that
// no message or request outlives the tune.
//
// One thread at a time (the tune's). Destroyed without finish() (a throw ended the tune on this
// rank), it drops its outstanding requests: the job is to be aborted then (ptxrt/mpi.hpp).
#pragma once

#include <mpi.h>

#include <deque>
#include <optional>
#include <vector>

#include "mpi/communicator.hpp"

namespace ptxrt::mpi::detail {

class BestTimeExchange {
 public:
  explicit BestTimeExchange(const Communicator& communicator);
  ~BestTimeExchange();
  BestTimeExchange(const BestTimeExchange&) = delete;
  BestTimeExchange& operator=(const BestTimeExchange&) = delete;

  // The best time offered on any rank that has arrived here, if any.
  std::optional<double> best();
  // Sends `milliseconds` to every other rank when it beats the best known.
  void offer(double milliseconds);
  // Collective: receives the rest and completes every send.
  void finish();

 private:
  // One time sent to every other rank; the value stays put until each send completes.
  struct Sent {
    double milliseconds = 0.0;
    std::vector<MPI_Request> requests;
  };

  // The receive kept posted for one other rank.
  struct Inbox {
    double milliseconds = 0.0;
    MPI_Request request = MPI_REQUEST_NULL;
    int received = 0;
  };

  void post(int source);
  // Folds in the time the inbox of `source` received and posts it again.
  void take(int source);
  void forget_completed_sends();

  const Communicator& communicator_;
  std::optional<double> best_;
  std::vector<Inbox> inboxes_;  // by rank, sized once: posted receives write into them
  std::deque<Sent> sent_;       // a deque: growing it moves no value a send still reads
  std::vector<int> sent_to_;
  bool finished_ = false;
};

}  // namespace ptxrt::mpi::detail
