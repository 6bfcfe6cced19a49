#!/usr/bin/env node
// The `kubectl-hcp` bin: on PATH, kubectl runs it for `kubectl hcp …` with the arguments after "hcp".
import { main } from "./main.ts";

await main("kubectl hcp");
