#!/usr/bin/env node
// The `hcpctl` bin.
import { main } from "./main.ts";

await main("hcpctl");
