// Dimensioned quantities written as strings with units ("300 GB/s", "2 us", "80 GiB").
// All values are converted to SI base units: seconds, bytes, bytes/s, FLOP, FLOP/s.
#ifndef TRIDENT_CORE_UNITS_H_
#define TRIDENT_CORE_UNITS_H_

#include <optional>
#include <string>

namespace trident {

enum class Dimension {
  kTime,       // s, ms, us, ns
  kBytes,      // B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024)
  kBandwidth,  // B/s, KB/s, MB/s, GB/s, TB/s (also GBps), bps, Kbps, Mbps, Gbps, Tbps (bits!)
  kFlops,      // FLOP, KFLOP, MFLOP, GFLOP, TFLOP, PFLOP (a count)
  kFlopRate,   // FLOPS, KFLOPS, MFLOPS, GFLOPS, TFLOPS, PFLOPS (per second)
  kFrequency,  // Hz, kHz, MHz, GHz (clock rates)
  kPower,      // W, kW
};

// Returns the dimension's name for messages, e.g. "bandwidth".
const char* dimension_name(Dimension dim);

// Returns a short list of accepted units for messages, e.g. "B/s, GB/s, Gbps, ...".
const char* accepted_units(Dimension dim);

// Parses "<number> <unit>" (space optional) into SI base units of `dim`.
// Returns nullopt and sets *error (if non-null) to a one-line reason when the text is not a
// number followed by a unit of that dimension (a bare number is an error, so is a unit of
// another dimension: "5 GB/s" for a time says it is a bandwidth).
std::optional<double> parse_quantity(const std::string& text, Dimension dim, std::string* error);

// Formats an SI value with a readable unit, e.g. 3e11 bytes/s -> "300 GB/s".
std::string format_quantity(double si_value, Dimension dim);

}  // namespace trident

#endif  // TRIDENT_CORE_UNITS_H_
