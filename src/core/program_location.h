// Where the running trident code lives: the executable (bin/trident, a test binary) or the
// shared object it was loaded from (the Python module _trident). The library search uses it
// to find the installed library beside the program, and to let only a program still in its
// build tree fall back on the source tree it was built from: an installed program reads its
// prefix's library or explicit paths, never a checkout that may have changed or gone.
#ifndef TRIDENT_CORE_PROGRAM_LOCATION_H_
#define TRIDENT_CORE_PROGRAM_LOCATION_H_

#include <string>

namespace trident {

// Returns the absolute path of the file (executable or shared object) holding this code, from
// /proc/self/maps; "" when it cannot be found.
std::string program_module_path();

// Returns whether `module` lies inside directory `build_dir` (both resolved through their
// symlinks); false when either is empty or does not exist.
bool is_inside_directory(const std::string& module, const std::string& build_dir);

// Whether this code runs from the build tree it was compiled in (TRIDENT_BUILD_DIR, defined
// by CMake for core/program_location.cc), not from an installed copy.
bool running_in_build_tree();

}  // namespace trident

#endif  // TRIDENT_CORE_PROGRAM_LOCATION_H_
