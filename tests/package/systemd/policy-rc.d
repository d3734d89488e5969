#!/bin/sh
# Allows every service action (container images ship one that forbids them).
exit 0
