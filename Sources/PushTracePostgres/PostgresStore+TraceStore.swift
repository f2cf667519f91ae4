import PushTraceStore

extension PostgresStore: TraceStore, SQLStore {}
