#!/bin/sh
# Stands in for a call to an auth server: writes a token where the check looks for it.
echo "requesting a new token"
printf 'tok-%s' "$$" > ../world/token
echo "token refreshed"
