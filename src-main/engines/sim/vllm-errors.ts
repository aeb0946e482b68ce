// vLLM's nested error envelope (v0.10+): {error:{message,type,param,code}}, HTTP status = code.
export function vllmError(status: number, message: string, type = 'BadRequestError', param: string | null = null) {
  return { error: { message, type, param, code: status } };
}
