// A private redis-server for the TypeScript scripts (one server, a Cluster, a Sentinel set): on free loopback
// ports, in scratch folders, never the machine's own Redis. The tests' helpers are the one implementation;
// the scripts in shell have start_redis_server in common.sh.
export {
  freshPrefix,
  type RedisCluster,
  type RedisServer,
  redisCommand,
  startRedis,
  startRedisCluster,
  startRedisSentinel,
} from '../../test/helpers/redis.js'
