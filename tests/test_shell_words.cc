// Shell scripts read as a shell would (config/shell_words.h): commands, assignments and
// arrays, expansion from the script and the environment, word splitting, and expansions
// without a value kept and marked.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "config/shell_words.h"
#include "config_support.h"
#include "core/errors.h"

using namespace trident;
using namespace trident::testing;

namespace {

// The words of each command, as "text" or "text@line:column".
std::vector<std::vector<std::string>> texts(const std::string& script,
                                            std::map<std::string, std::string> env = {}) {
  std::vector<std::vector<std::string>> out;
  for (const auto& command : split_shell_commands(script, "s.sh", environment(env))) {
    out.emplace_back();
    for (const ShellWord& w : command) out.back().push_back(w.text);
  }
  return out;
}

using Commands = std::vector<std::vector<std::string>>;

}  // namespace

TEST_CASE("shell commands: separators, redirections, pipes and comments", "[shell]") {
  CHECK(texts("a b; c && d | e 2>&1 > log.txt\n# note\nf 'g h' # end\n") ==
        Commands{{"a", "b"}, {"c"}, {"d"}, {"e"}, {"f", "g h"}});
  CHECK(texts("x \\\n  y\n") == Commands{{"x", "y"}});
  CHECK(texts("echo \"a\\\"b\" 'c\\d' \"$\"") == Commands{{"echo", "a\"b", "c\\d", "$"}});
  CHECK(texts("echo '' \"\"") == Commands{{"echo", "", ""}});
  // Parentheses in a word are its characters (Megatron's --moe-layer-freq, often unquoted).
  CHECK(texts("run --f ([0]*3+[1]*58) x") == Commands{{"run", "--f", "([0]*3+[1]*58)", "x"}});
}

TEST_CASE("shell variables: assignments, exports, defaults and the environment", "[shell]") {
  const std::string script =
      "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
      "GPUS=8\n"
      "NNODES=${NNODES:-1}\n"
      "ARGS=\"--nnodes $NNODES --nproc_per_node ${GPUS}\"\n"
      "run $ARGS \"$ARGS\" ${MISSING-fallback word} ${GPUS:+set}\n";
  CHECK(texts(script) == Commands{{"run", "--nnodes", "1", "--nproc_per_node", "8",
                                   "--nnodes 1 --nproc_per_node 8", "fallback", "word", "set"}});
  // The environment fills what the script does not set; the script's own value wins.
  CHECK(texts(script, {{"NNODES", "4"}, {"GPUS", "2"}})[0][2] == "4");
  CHECK(texts(script, {{"NNODES", "4"}, {"GPUS", "2"}})[0][4] == "8");
  CHECK(texts("A=x\nA+=y\nB=(1 2)\nB+=(3)\nrun $A ${B[@]} ${B[1]}") ==
        Commands{{"run", "xy", "1", "2", "3", "2"}});
}

TEST_CASE("shell arrays expand element by element", "[shell]") {
  const std::string script =
      "ARGS=(\n"
      "    --num-layers 32   # layers\n"
      "    --name \"a b\"\n"
      ")\n"
      "run ${ARGS[@]} | \"${ARGS[@]}\" | \"${ARGS[*]}\"\n";
  CHECK(texts(script) == Commands{{"run", "--num-layers", "32", "--name", "a", "b"},
                                  {"--num-layers", "32", "--name", "a b"},
                                  {"--num-layers 32 --name a b"}});
}

TEST_CASE("shell words keep where each was written", "[shell]") {
  const auto commands = split_shell_commands(
      "ARGS=\"--hidden-size 4096\"\nrun \\\n  --x $ARGS $E\n", "s.sh", environment({{"E", "--e"}}));
  REQUIRE(commands.size() == 1);
  const std::vector<ShellWord>& w = commands[0];
  REQUIRE(w.size() == 5);
  CHECK((w[1].line == 3 && w[1].column == 3));   // --x
  CHECK((w[2].line == 1 && w[2].column == 7));   // --hidden-size, in the assignment
  CHECK((w[3].line == 1 && w[3].column == 21));  // 4096
  CHECK((w[4].line == 3 && w[4].column == 13));  // from the environment: at its $
}

TEST_CASE("expansions without a value stay as written, marked", "[shell]") {
  const auto words =
      split_shell_words("run $NODE_RANK \"$ADDR\" --x=${Y} $(hostname) `date` \"$@\" $1 A${B}C",
                        "s.sh", environment({}));
  REQUIRE(words.size() == 9);
  CHECK(words[1].text == "$NODE_RANK");
  CHECK(words[1].unresolved == "$NODE_RANK");
  CHECK(words[1].bare);  // unquoted: could have been several words
  CHECK(words[2].unresolved == "$ADDR");
  CHECK_FALSE(words[2].bare);  // quoted: exactly one word
  CHECK(words[3].text == "--x=${Y}");
  CHECK_FALSE(words[3].bare);
  CHECK(words[4].unresolved == "$(hostname)");
  CHECK(words[5].unresolved == "`date`");
  CHECK(words[6].unresolved == "$@");
  CHECK(words[7].unresolved == "$1");
  CHECK(words[8].unresolved == "${B}");
  CHECK_FALSE(words[8].bare);
  CHECK(split_shell_words("run $EMPTY x", "s.sh", environment({{"EMPTY", ""}})).size() == 2);
}

TEST_CASE("unterminated quotes and expansions are refused at their position", "[shell]") {
  CHECK_THROWS_WITH(split_shell_words("a\n  'open", "s.sh", environment({})),
                    Catch::StartsWith("s.sh:2:3: unterminated ' quote"));
  CHECK_THROWS_WITH(split_shell_words("a \"open", "s.sh", environment({})),
                    Catch::StartsWith("s.sh:1:3: unterminated \" quote"));
  CHECK_THROWS_WITH(split_shell_words("a ${open", "s.sh", environment({})),
                    Catch::StartsWith("s.sh:1:3: unterminated ${"));
  CHECK_THROWS_WITH(split_shell_words("A=(1 2", "s.sh", environment({})),
                    Catch::StartsWith("s.sh:1:3: unterminated ("));
}

TEST_CASE("hostile scripts: deep ${ nesting and doubling variables are refused", "[shell]") {
  std::string deep = "run ";
  for (int i = 0; i < 1000; ++i) deep += "${A:-";
  deep += std::string(1000, '}');
  CHECK_THROWS_WITH(split_shell_words(deep, "s.sh", environment({})),
                    Catch::Contains("${...} nested more than 64 deep"));
  std::string bomb = "A=xxxxxxxxxxxxxxxx\n";
  for (int i = 0; i < 40; ++i) bomb += "A=$A$A\n";
  CHECK_THROWS_WITH(split_shell_words(bomb + "run $A\n", "s.sh", environment({})),
                    "s.sh: the script's variables expand to more than 16 MiB of text, the limit");
}
