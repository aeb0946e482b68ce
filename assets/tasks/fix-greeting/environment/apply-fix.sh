#!/bin/sh
# Fixes the greeting typo in greet.sh.
sed -i 's/Helo,/Hello,/' greet.sh && echo "patched greet.sh"
