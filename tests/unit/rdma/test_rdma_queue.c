#include "../test_util.h"
TEST_MAIN()
