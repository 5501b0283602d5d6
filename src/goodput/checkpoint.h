// What a checkpoint costs: its bytes per GPU (from the workload's memory accounting), the
// time it blocks training, the time until it is durable, and what a restart from it costs.
#ifndef TRIDENT_GOODPUT_CHECKPOINT_H_
#define TRIDENT_GOODPUT_CHECKPOINT_H_

#include "config/scenario.h"
#include "workload/stage_work.h"

namespace trident {

// kSync: every rank writes its shard straight to storage and training waits (Megatron-LM's
// default). kAsync: training waits only for the device-to-host copy; a background process
// writes while training goes on (Megatron-LM --async-save, PyTorch DCP async_save).
enum class CheckpointMode { kSync, kAsync };
const char* checkpoint_mode_name(CheckpointMode m);
bool parse_checkpoint_mode(const std::string& name, CheckpointMode* out);

struct CheckpointCost {
  double bytes_per_gpu = 0;   // the largest shard one GPU writes
  double bytes_total = 0;     // the whole checkpoint
  double save_block_s = 0;    // training stalls this long per checkpoint
  double write_lag_s = 0;     // after the stall, until the checkpoint is durable (async)
  double write_s = 0;         // a whole blocking write (sync save; planned stops use it)
  double load_s = 0;          // reading it back at restart
  double restart_s = 0;       // detection + scheduling + process start + NCCL init + load
  double planned_stop_s = 0;  // a planned stop: write_s + restart without detection
};

// Returns the checkpoint of `scenario` as built in `workload` (requires workload =
// build_workload(scenario)). A checkpoint holds each model parameter's 16-bit weight and its
// optimizer state once (Megatron-Core dist_checkpointing, fully parallel save): a GPU writes
// its weights / (d x cp), since data- and context-parallel replicas split the save of what they
// all hold, and its optimizer state, already / (d x cp) under the distributed optimizer,
// else / (d x cp) too. The save of a node's GPUs runs at
// min(storage.write_bandwidth_per_node, storage.write_bandwidth / nodes), and so does the read
// at restart. Async blocks for the device-to-host copy at host.device_to_host_bandwidth (when
// not given: as long as a synchronous write, no gain).
CheckpointCost checkpoint_cost(const Scenario& scenario, const Workload& workload,
                               CheckpointMode mode);

}  // namespace trident

#endif  // TRIDENT_GOODPUT_CHECKPOINT_H_
