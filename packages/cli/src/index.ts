export { main, buildProgram, runCli, type CliIo } from './main.js';
