#!/bin/bash
# Reference solution: add must add.
cd /app && sed -i 's/\$(( \$1 - \$2 ))/$(( $1 + $2 ))/' calc.sh && sh test_calc.sh
