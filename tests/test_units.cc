// Quantity parsing and formatting (core/units.h).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "core/units.h"

using trident::Dimension;
using trident::format_quantity;
using trident::parse_quantity;

namespace {

double parse_ok(const std::string& text, Dimension dim) {
  std::string error;
  auto v = parse_quantity(text, dim, &error);
  INFO(text << " -> " << error);
  REQUIRE(v.has_value());
  return *v;
}

std::string parse_error(const std::string& text, Dimension dim) {
  std::string error;
  auto v = parse_quantity(text, dim, &error);
  INFO(text);
  REQUIRE_FALSE(v.has_value());
  REQUIRE_FALSE(error.empty());
  return error;
}

}  // namespace

TEST_CASE("times in s, ms, us, ns", "[units]") {
  CHECK(parse_ok("2 s", Dimension::kTime) == 2.0);
  CHECK(parse_ok("1.5 ms", Dimension::kTime) == Approx(1.5e-3));
  CHECK(parse_ok("2 us", Dimension::kTime) == Approx(2e-6));
  CHECK(parse_ok("2us", Dimension::kTime) == Approx(2e-6));
  CHECK(parse_ok("700 ns", Dimension::kTime) == Approx(7e-7));
  CHECK(parse_ok("  3e-3 s ", Dimension::kTime) == Approx(3e-3));
  CHECK(parse_ok("0 us", Dimension::kTime) == 0.0);
}

TEST_CASE("sizes: decimal and binary prefixes", "[units]") {
  CHECK(parse_ok("1 B", Dimension::kBytes) == 1.0);
  CHECK(parse_ok("80 GB", Dimension::kBytes) == 80e9);
  CHECK(parse_ok("80 GiB", Dimension::kBytes) == 80.0 * (1ull << 30));
  CHECK(parse_ok("1 KiB", Dimension::kBytes) == 1024.0);
  CHECK(parse_ok("2 MiB", Dimension::kBytes) == 2.0 * (1 << 20));
  CHECK(parse_ok("1 TiB", Dimension::kBytes) == std::pow(1024.0, 4));
  CHECK(parse_ok("1.5 TB", Dimension::kBytes) == 1.5e12);
  CHECK(parse_ok("4 KB", Dimension::kBytes) == 4e3);
}

TEST_CASE("bandwidths: bytes per second and bits per second", "[units]") {
  CHECK(parse_ok("300 GB/s", Dimension::kBandwidth) == 3e11);
  CHECK(parse_ok("300 GBps", Dimension::kBandwidth) == 3e11);
  CHECK(parse_ok("2039 GB/s", Dimension::kBandwidth) == 2039e9);
  CHECK(parse_ok("3.35 TB/s", Dimension::kBandwidth) == Approx(3.35e12));
  // Bits, not bytes: HDR InfiniBand's 200 Gb/s is 25 GB/s.
  CHECK(parse_ok("200 Gbps", Dimension::kBandwidth) == 25e9);
  CHECK(parse_ok("200 Gb/s", Dimension::kBandwidth) == 25e9);
  CHECK(parse_ok("400 Gbps", Dimension::kBandwidth) == 50e9);
  CHECK(parse_ok("1 Tbps", Dimension::kBandwidth) == 125e9);
  CHECK(parse_ok("100 Mbps", Dimension::kBandwidth) == 12.5e6);
  CHECK(parse_ok("8 bps", Dimension::kBandwidth) == 1.0);
  CHECK(parse_ok("1 B/s", Dimension::kBandwidth) == 1.0);
  CHECK(parse_ok("1 GiB/s", Dimension::kBandwidth) == std::pow(1024.0, 3));
}

TEST_CASE("FLOP counts and FLOP rates", "[units]") {
  CHECK(parse_ok("2 GFLOP", Dimension::kFlops) == 2e9);
  CHECK(parse_ok("1 PFLOP", Dimension::kFlops) == 1e15);
  CHECK(parse_ok("10 FLOP", Dimension::kFlops) == 10.0);
  CHECK(parse_ok("312 TFLOPS", Dimension::kFlopRate) == 312e12);
  CHECK(parse_ok("19.5 TFLOPS", Dimension::kFlopRate) == Approx(19.5e12));
  CHECK(parse_ok("989 TFLOP/s", Dimension::kFlopRate) == 989e12);
  CHECK(parse_ok("1 PFLOPS", Dimension::kFlopRate) == 1e15);
  CHECK(parse_ok("5 KFLOPS", Dimension::kFlopRate) == 5e3);
}

TEST_CASE("clock rates and power", "[units]") {
  CHECK(parse_ok("1830 MHz", Dimension::kFrequency) == 1830e6);
  CHECK(parse_ok("1.965 GHz", Dimension::kFrequency) == Approx(1965e6));
  CHECK(parse_ok("700 W", Dimension::kPower) == 700.0);
  CHECK(parse_ok("1.2 kW", Dimension::kPower) == Approx(1200.0));
  CHECK_THAT(parse_error("700 W", Dimension::kFrequency), Catch::Contains("is a power"));
  CHECK(format_quantity(1465e6, Dimension::kFrequency) == "1.465 GHz");
}

TEST_CASE("a bare number names the accepted units", "[units]") {
  const std::string e = parse_error("300", Dimension::kBandwidth);
  CHECK_THAT(e, Catch::Contains("no unit"));
  CHECK_THAT(e, Catch::Contains("GB/s"));
  CHECK_THAT(e, Catch::Contains("Gbps"));
  CHECK_THAT(parse_error("2", Dimension::kTime), Catch::Contains("s, ms, us, ns"));
  CHECK_THAT(parse_error("80", Dimension::kBytes), Catch::Contains("GiB"));
}

TEST_CASE("a unit of another dimension says which dimension it is", "[units]") {
  CHECK(parse_error("5 GB/s", Dimension::kTime) ==
        "`5 GB/s` is a bandwidth, expected a time (s, ms, us, ns)");
  CHECK_THAT(parse_error("80 GiB", Dimension::kBandwidth),
             Catch::Contains("is a size, expected a bandwidth"));
  CHECK_THAT(parse_error("312 TFLOPS", Dimension::kFlops),
             Catch::Contains("is a FLOP rate, expected a FLOP count"));
  CHECK_THAT(parse_error("2 GFLOP", Dimension::kFlopRate),
             Catch::Contains("is a FLOP count, expected a FLOP rate"));
  CHECK_THAT(parse_error("2 us", Dimension::kBytes), Catch::Contains("is a time"));
}

TEST_CASE("nan, inf, negatives, junk and unknown units are refused", "[units]") {
  CHECK_THAT(parse_error("nan GB/s", Dimension::kBandwidth), Catch::Contains("number"));
  CHECK_THAT(parse_error("inf GB/s", Dimension::kBandwidth), Catch::Contains("number"));
  CHECK_THAT(parse_error("1e999 GB/s", Dimension::kBandwidth), Catch::Contains("out of range"));
  CHECK_THAT(parse_error("-5 GB/s", Dimension::kBandwidth), Catch::Contains("negative"));
  CHECK_THAT(parse_error("300 GB/s fast", Dimension::kBandwidth),
             Catch::Contains("unexpected text `fast`"));
  CHECK_THAT(parse_error("300 GiGs", Dimension::kBandwidth), Catch::Contains("unknown unit"));
  CHECK_THAT(parse_error("fast", Dimension::kBandwidth),
             Catch::Contains("does not start with a number"));
  CHECK_THAT(parse_error("", Dimension::kTime), Catch::Contains("empty"));
  CHECK_THAT(parse_error("0x10 GB", Dimension::kBytes), Catch::Contains("unknown unit"));
  // Wrong case gets a hint; bits and bytes are never confused.
  CHECK_THAT(parse_error("300 gb/s", Dimension::kBandwidth),
             Catch::Contains("did you mean `GB/s` or `Gb/s`?"));
  CHECK_THAT(parse_error("312 tflops", Dimension::kFlopRate),
             Catch::Contains("did you mean `TFLOPS`?"));
}

TEST_CASE("format_quantity picks a readable unit", "[units]") {
  CHECK(format_quantity(3e11, Dimension::kBandwidth) == "300 GB/s");
  CHECK(format_quantity(25e9, Dimension::kBandwidth) == "25 GB/s");
  CHECK(format_quantity(80.0 * (1ull << 30), Dimension::kBytes) == "80 GiB");
  CHECK(format_quantity(2e9, Dimension::kBytes) == "2 GB");
  CHECK(format_quantity(2e-6, Dimension::kTime) == "2 us");
  CHECK(format_quantity(1.5e-3, Dimension::kTime) == "1.5 ms");
  CHECK(format_quantity(0, Dimension::kTime) == "0 s");
  CHECK(format_quantity(312e12, Dimension::kFlopRate) == "312 TFLOPS");
  CHECK(format_quantity(2e9, Dimension::kFlops) == "2 GFLOP");
  CHECK(format_quantity(100e12, Dimension::kBandwidth) == "100 TB/s");
}

TEST_CASE("format then parse round-trips", "[units]") {
  for (Dimension dim :
       {Dimension::kTime, Dimension::kBytes, Dimension::kBandwidth, Dimension::kFlops,
        Dimension::kFlopRate, Dimension::kFrequency, Dimension::kPower}) {
    for (double v : {1.0, 2.5e-6, 3e11, 4096.0, 312e12}) {
      const std::string text = format_quantity(v, dim);
      CHECK(parse_ok(text, dim) == Approx(v).epsilon(1e-3));
    }
  }
}
