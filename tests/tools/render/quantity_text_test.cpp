// Means in a table's units (tools/render/quantity_text.h): `usage --step -o
// table` used to print gpu.memory as 77166245751.466666667 where state
// prints 80Gi.
#include "tools/render/quantity_text.h"
#include "tests/test_support.h"

using namespace ledger;

namespace quantity_text_test {

TEST_CASE("series means read in the state's units", "[render][table]") {
  CHECK(render::humanMean("85899345920", "gpu.example.com/gpu.memory") == "80Gi");
  CHECK(render::humanMean("77166245751.466666667", "gpu.memory") == "71.87Gi");
  CHECK(render::humanMean("1536", "memory") == "1.5Ki");
  CHECK(render::humanMean("512", "memory") == "512");
  CHECK(render::humanMean("0", "memory") == "0");
  CHECK(render::humanMean("2.5", "cpu") == "2500m");
  CHECK(render::humanMean("0.333333333", "nvidia.com/gpu") == "333m");
  CHECK(render::humanMean("4", "nvidia.com/gpu") == "4");
  CHECK(render::humanMean("not a number", "cpu") == "not a number");
}

}  // namespace quantity_text_test
