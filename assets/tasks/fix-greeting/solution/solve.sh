#!/bin/bash
# Reference solution: correct the typo in place.
sed -i 's/Helo,/Hello,/' /app/greet.sh
