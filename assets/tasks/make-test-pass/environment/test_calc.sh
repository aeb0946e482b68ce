#!/bin/sh
# Tests for calc.sh: prints "all tests passed" and exits 0 when they pass.
. ./calc.sh
fail=0
check() { if [ "$2" != "$3" ]; then echo "FAIL: $1 gave $2, expected $3"; fail=1; fi; }
check "add 2 3" "$(add 2 3)" 5
check "add -1 1" "$(add -1 1)" 0
check "triple 4" "$(triple 4)" 12
[ "$fail" = 0 ] && echo "all tests passed"
exit "$fail"
