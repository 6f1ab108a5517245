import json
import sys, os
D=os.path.join(sys.argv[1] if len(sys.argv) > 1 else "fixtures", "anthropic-messages") + "/"
os.makedirs(D, exist_ok=True)
U={"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}
def sse(ev, data): return f"event: {ev}\ndata: {json.dumps(data)}\n\n"
def start(model="claude-sonnet-4-5-20250929", usage=None, **extra):
    m={"id":"msg_x","type":"message","role":"assistant","model":model,"content":[],"stop_reason":None,"usage":usage or {"input_tokens":10,"output_tokens":1}}
    m.update(extra)
    return sse("message_start",{"type":"message_start","message":m})
def text_block(i, parts):
    out=[sse("content_block_start",{"type":"content_block_start","index":i,"content_block":{"type":"text","text":""}})]
    for p in parts: out.append(sse("content_block_delta",{"type":"content_block_delta","index":i,"delta":{"type":"text_delta","text":p}}))
    out.append(sse("content_block_stop",{"type":"content_block_stop","index":i}))
    return out
def end(reason="end_turn", usage=None, **delta):
    d={"stop_reason":reason}; d.update(delta)
    return [sse("message_delta",{"type":"message_delta","delta":d,"usage":usage or {"output_tokens":5}}), sse("message_stop",{"type":"message_stop"})]
WEATHER={"name":"get_weather","description":"Get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}
READ={"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}
def asst(content, **kw):
    m={"role":"assistant","content":content,"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":U,"stopReason":"stop","timestamp":1767225600000}
    m.update(kw); return m
def user(c): return {"role":"user","content":c,"timestamp":1767225600000}
def tres(id, name, content, err=False, **kw):
    m={"role":"toolResult","toolCallId":id,"toolName":name,"content":content,"isError":err,"timestamp":1767225600000}; m.update(kw); return m
def fx(name, context, response, model={}, options={}):
    if isinstance(response, list): response={"chunks":response,"headers":{"content-type":"text/event-stream"},"status":200,"delayMs":0,"disconnectAfterChunk":None}
    # FORMAT.md's canonical JSON (sorted keys, two-space indent, raw UTF-8, final newline).
    with open(D+name+".json","w") as f:
        f.write(json.dumps({"api":"anthropic-messages","description":name,"model":model,"options":options,"context":context,"response":response}, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
OK=[start()]+text_block(0,["Hi"," there"])+end()
IMG="iVBORw0KGgo="
fx("x-multi-turn", {"systemPrompt":"Sys","tools":[WEATHER,READ],"messages":[
  user([{"type":"text","text":"Look"},{"type":"image","data":IMG,"mimeType":"image/png"},{"type":"text","text":"   "}]),
  asst([{"type":"thinking","thinking":"hmm","thinkingSignature":"sig1"},{"type":"thinking","thinking":"nosig"},{"type":"thinking","thinking":"","thinkingSignature":"  "},{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"REDACTED","redacted":True},{"type":"text","text":"  "},{"type":"text","text":"ok"},{"type":"toolCall","id":"toolu_1","name":"get_weather","arguments":{"city":"Paris"}},{"type":"toolCall","id":"toolu_2","name":"read","arguments":{"path":"a"}}],stopReason="toolUse"),
  tres("toolu_1","get_weather",[{"type":"text","text":"sunny"},{"type":"text","text":"20C"}]),
  tres("toolu_2","read",[{"type":"image","data":IMG,"mimeType":"image/png"}],True),
  user("and now?"),
  asst([{"type":"text","text":"partial"}],stopReason="error",errorMessage="boom"),
  user([{"type":"text","text":"again"}])]}, OK, options={"reasoning":"high","maxTokens":4096,"temperature":0.5})
fx("x-foreign-history", {"messages":[
  user("q"),
  asst([{"type":"thinking","thinking":"t","thinkingSignature":"openai-sig"},{"type":"text","text":"a"},{"type":"toolCall","id":"call_abc|def/ghi+jkl=="+"x"*70,"name":"read","arguments":{"path":"p"}}],api="openai-responses",provider="openai",model="gpt-5",stopReason="toolUse"),
  tres("call_abc|def/ghi+jkl=="+"x"*70,"read",[{"type":"text","text":"file"}]),
  ],"tools":[READ]}, OK, options={"cacheRetention":"none"})
fx("x-headers-options", {"systemPrompt":"S","messages":[user("hi")],"tools":[WEATHER]}, OK,
  model={"headers":{"anthropic-beta":"b1, b2,b1","X-Model":"m"}},
  options={"headers":{"X-Custom":"a","User-Agent":"mine","x-model":None},"metadata":{"user_id":"u1","other":2},"toolChoice":{"type":"tool","name":"get_weather"},"temperature":0.2,"cacheRetention":"none"})
fx("x-beta-null", {"messages":[user("hi")]}, OK, options={"headers":{"anthropic-beta":None},"reasoning":"low","toolChoice":"any"})
fx("x-oauth", {"systemPrompt":"S","messages":[user("hi"),asst([{"type":"toolCall","id":"t1","name":"read","arguments":{}}],stopReason="toolUse"),tres("t1","read",[{"type":"text","text":"x"}])],"tools":[READ,WEATHER]},
  [start(),sse("content_block_start",{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"Read","input":{}}}),
   sse("content_block_delta",{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"x\"}"}}),
   sse("content_block_stop",{"type":"content_block_stop","index":0})]+end("tool_use"), options={"apiKey":"sk-ant-oat01-secret"})
fx("x-refusal-usage", {"messages":[user("hi")]}, [start(usage={"input_tokens":100,"output_tokens":1,"cache_read_input_tokens":50,"cache_creation_input_tokens":20,"cache_creation":{"ephemeral_1h_input_tokens":5}})]+text_block(0,["No"])+end("refusal",usage={"input_tokens":None,"output_tokens":30,"cache_read_input_tokens":7,"output_tokens_details":{"thinking_tokens":12}},stop_details={"explanation":"Not allowed"}))
fx("x-redacted-maxtokens", {"messages":[user("hi")]}, [start(),
   sse("content_block_start",{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"ENC"}}),
   sse("content_block_stop",{"type":"content_block_stop","index":0}),
   sse("content_block_start",{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"pre"}}),
   sse("content_block_delta",{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":" more"}}),
   sse("content_block_delta",{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"S1"}}),
   sse("content_block_delta",{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"S2"}}),
   sse("content_block_stop",{"type":"content_block_stop","index":1}),
   sse("content_block_start",{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"tu","name":"read"}}),
   sse("content_block_delta",{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"abc"}}),
   sse("content_block_delta",{"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"lost"}}),
   ]+end("max_tokens"), options={"reasoning":"minimal"})
fx("x-sensitive", {"messages":[user("hi")]}, [start()]+text_block(0,["a"])+end("sensitive"))
fx("x-empty-body", {"messages":[user("hi")]}, [])
fx("x-disconnect", {"messages":[user("hi")]}, {"chunks":[start(), text_block(0,["a"])[0], text_block(0,["abc"])[1]],"headers":{"content-type":"text/event-stream"},"status":200,"delayMs":0,"disconnectAfterChunk":2})
fx("x-bad-json", {"messages":[user("hi")]}, [start(), "event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"text\", \"text\": \"\"}\n\n", "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\tb\\q\"}}\n\n", "event: content_block_delta\ndata: {\"type\": tru}\n\n"])
fx("x-null-event", {"messages":[user("hi")]}, [start(), ": comment\n\n", "event: message_delta\ndata: null\n\n"])
fx("x-start-no-usage", {"messages":[user("hi")]}, ["event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\"}}\n\n"])
fx("x-adaptive", {"messages":[user("hi")],"tools":[WEATHER]}, OK, model={"compat":{"forceAdaptiveThinking":True,"supportsEagerToolInputStreaming":False,"supportsLongCacheRetention":False,"sendSessionAffinityHeaders":True},"thinkingLevelMap":{"medium":"max"}}, options={"reasoning":"medium","cacheRetention":"long","sessionId":"sess-1","temperature":0.3})
fx("x-mid-convo", {"messages":[user("hi"),asst([{"type":"text","text":"a"}],providerThinkingLevel="low"),asst([{"type":"text","text":"b"}],providerThinkingLevel="weird"),user("more")]}, [start()]+text_block(0,["x"])+end(), model={"compat":{"supportsMidConvoEffort":True,"allowedFallbackModels":[{"provider":"anthropic","model":"claude-fallback","cost":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0}}]}}, options={"reasoning":"high","temperature":1})
fx("x-fallback-cost", {"messages":[user("hi")]}, [start(model="claude-fallback",usage={"input_tokens":1000,"output_tokens":10})]+text_block(0,["x"])+[sse("content_block_start",{"type":"content_block_start","index":1,"content_block":{"type":"fallback"}})]+end(), model={"compat":{"allowedFallbackModels":[{"provider":"anthropic","model":"claude-fallback","cost":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0}}]}})
fx("x-http-400-message", {"messages":[user("hi")]}, {"chunks":["{\"message\": \"bad thing\", \"n\": 1.0}"],"headers":{"content-type":"application/json"},"status":400,"delayMs":0,"disconnectAfterChunk":None})
fx("x-http-529-empty", {"messages":[user("hi")]}, {"chunks":[""],"headers":{"content-type":"application/json"},"status":529,"delayMs":0,"disconnectAfterChunk":None})
fx("x-deferred-tools", {"messages":[user("hi"),asst([{"type":"toolCall","id":"t1","name":"search_tools","arguments":{"q":"w"}}],stopReason="toolUse"),tres("t1","search_tools",[{"type":"text","text":"found"}],addedToolNames=["get_weather","read"]),asst([{"type":"toolCall","id":"t2","name":"read","arguments":{}}],stopReason="toolUse"),tres("t2","read",[{"type":"text","text":"r"}],addedToolNames=["get_weather"])],
  "tools":[{"name":"search_tools","description":"s","parameters":{"type":"object","properties":{}}},WEATHER,READ]}, OK)
fx("x-transformations", {"messages":[user("hi")]}, [start(input_transformations=[{"type":"t1","path":"p","reason":"q"}])]+text_block(0,["x"])+[sse("message_delta",{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3},"input_transformations":[{"type":"dropped","path":"messages.0","reason":"r","extra":1}]}), sse("message_stop",{"type":"message_stop"})])
fx("x-llama-no-reasoning", {"messages":[user("   "),user("hi")],"systemPrompt":""}, OK, model={"reasoning":False,"thinkingLevelMap":{"off":None},"contextWindow":5000,"maxTokens":4096,"provider":"llama-cpp","id":"q"}, options={"reasoning":"high","maxTokens":100000})
fx("x-off-null", {"messages":[user("hi")]}, OK, model={"thinkingLevelMap":{"off":None}}, options={"maxTokens":10})
fx("x-stop-without-delta", {"messages":[user("hi")]}, [start()]+text_block(0,["x"])+[sse("message_stop",{"type":"message_stop"}), "event: ping\ndata: {}\n\n", "event: error\ndata: late error\n\n"])
fx("x-error-after-stop", {"messages":[user("hi")]}, OK+["event: error\ndata: {\"type\":\"error\"}\n\n"])
fx("x-cr-only", {"messages":[user("hi")]}, [c.replace("\n","\r") for c in OK])

fx("x-string-content", {"systemPrompt":"S","messages":[user("first"),asst([{"type":"text","text":"a"}]),user("  \n "),user([{"type":"text","text":"blocks"}]),asst([{"type":"text","text":"b"}]),user("last one")]}, OK)
fx("x-string-content-nocache", {"messages":[user("first"),asst([{"type":"text","text":"a"}]),user("last")]}, OK, options={"cacheRetention":"none"})
fx("x-copilot", {"messages":[user("hi"),asst([{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"x"}}],stopReason="toolUse",provider="github-copilot"),tres("t1","read",[{"type":"image","data":IMG,"mimeType":"image/png"}])],"tools":[READ]}, OK, model={"provider":"github-copilot","headers":{"Editor-Version":"vscode/1.0","X-Initiator":"model"}}, options={"apiKey":"ghu_token123","sessionId":"s1"})
fx("x-http-204", {"messages":[user("hi")]}, {"chunks":[],"headers":{},"status":204,"delayMs":0,"disconnectAfterChunk":None})
fx("x-two-deltas-dup-index", {"messages":[user("hi")]}, [start(),
   sse("content_block_start",{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"A"}}),
   sse("content_block_start",{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"B"}}),
   sse("content_block_delta",{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"1"}}),
   sse("content_block_stop",{"type":"content_block_stop","index":0}),
   sse("content_block_delta",{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"2"}}),
   sse("content_block_stop",{"type":"content_block_stop","index":0}),
   sse("content_block_start",{"type":"content_block_start","content_block":{"type":"text","text":""}}),
   sse("content_block_delta",{"type":"content_block_delta","delta":{"type":"text_delta","text":"noidx"}}),
   sse("message_delta",{"type":"message_delta","delta":{"stop_reason":None},"usage":None}),
   sse("message_delta",{"type":"message_delta","delta":{"stop_reason":"stop_sequence"},"usage":{"output_tokens":9,"input_tokens":4}}),
   sse("message_stop",{"type":"message_stop"})])
fx("x-http-500-retry-none", {"messages":[user("hi")]}, {"chunks":["{\"error\": {\"message\": {\"nested\": true}}, \"message\": 0}"],"headers":{"content-type":"application/json","x-should-retry":"true"},"status":503,"delayMs":0,"disconnectAfterChunk":None})
fx("x-retry-429", {"messages":[user("hi")]}, {"chunks":["{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow\"}}"],"headers":{"content-type":"application/json","retry-after-ms":"5"},"status":429,"delayMs":0,"disconnectAfterChunk":None}, options={"maxRetries":2})
fx("x-retry-too-long", {"messages":[user("hi")]}, {"chunks":["{\"message\":\"wait\"}"],"headers":{"content-type":"application/json","retry-after":"120"},"status":503,"delayMs":0,"disconnectAfterChunk":None}, options={"maxRetries":1})
fx("x-retry-not-retryable", {"messages":[user("hi")]}, {"chunks":["{\"message\":\"bad\"}"],"headers":{"content-type":"application/json","x-should-retry":"false"},"status":500,"delayMs":0,"disconnectAfterChunk":None}, options={"maxRetries":3})
