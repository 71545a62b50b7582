// Moved to tools/ so that the soak (a tool) and the tests share one private cluster.
export { PrivatePostgres, privatePostgresAvailable } from '../../tools/private-postgres.js';
