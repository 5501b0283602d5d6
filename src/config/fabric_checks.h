// Cross-field checks of the fabric settings (cluster.network: rail-optimized, planes).
#ifndef TRIDENT_CONFIG_FABRIC_CHECKS_H_
#define TRIDENT_CONFIG_FABRIC_CHECKS_H_

#include <vector>

#include "config/checks.h"
#include "config/cluster.h"

namespace trident {

// Appends to *issues the fabric settings of `cluster` that cannot be built or would mean
// nothing: a rail-optimized fabric whose nodes do not have one NIC per GPU (a rail is "NIC i
// of every node"), PXN without NVLink between a node's GPUs (an island smaller than a node),
// planes whose share of a NIC is below the slowest switch port (50 Gb/s).
void add_fabric_issues(const ClusterSpec& cluster, std::vector<SpecIssue>* issues);

// The slowest port a switch plane may run at: one 50 Gb/s lane (bytes/s).
constexpr double kMinPlaneBandwidth = 50e9 / 8;

}  // namespace trident

#endif  // TRIDENT_CONFIG_FABRIC_CHECKS_H_
