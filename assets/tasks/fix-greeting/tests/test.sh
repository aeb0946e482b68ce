#!/bin/bash
# Verifier: greet.sh must greet every name correctly.
mkdir -p /logs/verifier
ok=1
for name in Ada Grace "Barbara Liskov"; do
  got="$(sh /app/greet.sh "$name" 2>&1)"
  if [ "$got" != "Hello, $name!" ]; then
    echo "FAIL: greet.sh \"$name\" printed: $got"
    ok=0
  fi
done
echo "$ok" > /logs/verifier/reward.txt
