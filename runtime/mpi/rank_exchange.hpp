// What the ranks of a distributed tune tell each other (mpi/distributed_tune.cpp), by
// non-blocking point-to-point messages only, so that a rank that dies blocks none of the others:
// - news: one double, either a best time better than any the sender knew (sent at once to every
//   other rank) or 0, a sign of life (at most once a second while the sender tunes). Each rank
//   keeps a receive posted for every other and reads what arrived before each config (MPI_Test,
//   which lets MPI make progress and then looks again), so no rank waits for another while it
//   tunes.
// - the end: the sender's share report and how many news it sent the receiver, so that the
//   receiver reads them all before it withdraws its posted receive.
// finish() sends the end and waits for every other rank's; a rank heard from neither by news nor
// by its end for `silence_limit` counts as lost (died, or stopped answering), and finish()
// returns without it. No collective is involved: with a lost rank, the others still return.
//
// One thread at a time (the tune's). Destroyed without finish() (a throw ended the tune on this
// rank), it drops its outstanding requests: the job is to be aborted then (ptxrt/mpi.hpp).
#pragma once

#include <mpi.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "mpi/communicator.hpp"

namespace ptxrt::mpi::detail {

class RankExchange {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RankExchange(const Communicator& communicator);
  ~RankExchange();
  RankExchange(const RankExchange&) = delete;
  RankExchange& operator=(const RankExchange&) = delete;

  // The best time offered on any rank whose news has arrived here, if any.
  std::optional<double> best();
  // Sends `milliseconds` to every other rank when it beats the best known.
  void offer(double milliseconds);
  // Tells every other rank that this one is alive, unless it did within the last second.
  void show_alive();
  // Sends `report` to every other rank and returns every rank's report by rank (this rank's own
  // included), with nullopt for the ranks found lost.
  std::vector<std::optional<std::string>> finish(const std::string& report,
                                                 std::chrono::seconds silence_limit);

 private:
  // One news to every other rank; the value stays put until each send completes. Requests are
  // by destination rank (MPI_REQUEST_NULL for this rank's own).
  struct Sent {
    double milliseconds = 0.0;
    std::vector<MPI_Request> requests;
  };

  // What this rank knows of one other rank.
  struct Peer {
    double news = 0.0;  // the posted receive writes here
    MPI_Request request = MPI_REQUEST_NULL;
    int news_received = 0;
    std::optional<int> news_expected;  // from its end message
    std::optional<std::string> report;
    Clock::time_point last_heard;
    std::string end_sent;  // what finish() sends it, until the send completes
    MPI_Request end_request = MPI_REQUEST_NULL;
    bool lost = false;
  };

  void post(int source);
  // Reads every news that has arrived from `source`; true if any did.
  bool read_news(int source);
  // Receives the end message of `source` if it has arrived; true if it did.
  bool read_end(int source);
  void send_news(double milliseconds);
  void forget_completed_sends();
  // Withdraws the receive posted for `source`, who sends no more.
  void withdraw(int source);
  // Completes the sends to the ranks not lost and drops those to the lost.
  void complete_sends();

  const Communicator& communicator_;
  std::optional<double> best_;
  std::vector<Peer> peers_;  // by rank, sized once: posted receives write into them
  std::deque<Sent> sent_;    // a deque: growing it moves no value a send still reads
  std::vector<int> news_sent_to_;
  Clock::time_point last_shown_alive_;
  bool finished_ = false;
};

}  // namespace ptxrt::mpi::detail
