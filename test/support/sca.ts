export { completeSca, type ScaChoice } from '#src/sandbox/scripted-psu.js';
