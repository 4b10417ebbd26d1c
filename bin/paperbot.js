#!/usr/bin/env node
// The `paperbot` command. Sources are TypeScript run through tsx, so strategies and the CLI
// load without a manual build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
