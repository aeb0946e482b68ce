#!/bin/sh
# Integer helpers; source this file.

# add A B: prints A + B
add() {
  echo $(( $1 - $2 ))
}

# triple X: prints 3 * X
triple() {
  add "$(add "$1" "$1")" "$1"
}
