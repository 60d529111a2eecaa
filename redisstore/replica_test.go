package redisstore_test

const replicaRoleEnv = "REDISSTORE_TEST_REPLICA"

func replicaMain(role string) int { return 2 }
