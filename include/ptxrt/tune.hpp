// ptxrt::tune: tuning spaces, the tuner, the tuning database, tuning problems and their
// workers, the strategy replay and Kernel Tuner's files, over ptxrt::core. Link ptxrt::tune
// (pkg-config: ptxrt-tune).
#pragma once

#include "ptxrt/core.hpp"
#include "ptxrt/tune/device_selection.hpp"
#include "ptxrt/tune/job_tuner.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/kernel_tuner_files.hpp"
#include "ptxrt/tune/launch_timer.hpp"
#include "ptxrt/tune/problem_session.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tune_replay.hpp"
#include "ptxrt/tune/tune_worker.hpp"
#include "ptxrt/tune/tuned_kernel.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "ptxrt/tune/tuning_space.hpp"
