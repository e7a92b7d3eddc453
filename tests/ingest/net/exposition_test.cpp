// Label values on the /metrics pages (ingest/net/exposition.h): the text
// exposition format escapes backslash, double quote and newline, nothing else.
#include "ingest/net/exposition.h"

#include "tests/test_support.h"

namespace exposition_test {

using ledger::net::labelValue;

TEST_CASE("a label value escapes backslash, quote and newline", "[net][metrics]") {
  CHECK(labelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(labelValue("") == "");
  // Names from the cluster are UTF-8 and may hold any other byte as it is.
  CHECK(labelValue("team-a/gpu\t\xc3\xa9") == "team-a/gpu\t\xc3\xa9");
  CHECK(labelValue("\\\\") == "\\\\\\\\");
}

}  // namespace exposition_test
