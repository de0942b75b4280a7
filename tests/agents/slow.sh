#!/bin/sh
# An agent that outlives any small stage budget.
sleep 60
