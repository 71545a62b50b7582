export { completeSca } from '#src/sandbox/scripted-psu.js';
