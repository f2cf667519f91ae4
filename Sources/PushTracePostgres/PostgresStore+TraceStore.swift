import PushTraceStore

extension PostgresStore: TraceStore {}
