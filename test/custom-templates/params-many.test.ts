import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { CompiledModule, ModuleDescription, StrategySandbox } from '../../src/custom-templates/sandbox/contract.js'
import { createStrategySandbox } from '../../src/custom-templates/sandbox/sandbox-service.js'
import { AppError } from '../../src/http/errors.js'
import { SMA } from './modules.js'

const USER = 1

/**
 * resolveParamsMany: a sweep's configurations resolved on one instance of the module per batch (one
 * request per configuration took ~10 ms each: a 10,000-configuration sweep's POST took 96 s). Each
 * answer must be what resolveParams gives for the same params.
 */
describe('resolving many params of a module at once', () => {
  let sandbox: StrategySandbox
  let module: { compiled: CompiledModule; description: ModuleDescription }
  before(async () => {
    sandbox = createStrategySandbox(1)
    module = await sandbox.inspect(USER, SMA, 'javascript')
  })
  after(() => sandbox.close())

  it("answers each params as resolveParams does: resolved with its warm-up, or the refusal naming the field", async () => {
    const paramsList = [{ fast: 5, slow: 50 }, { fast: 60, slow: 50 }, { fast: 1, slow: 50 }, { fast: 7 }, { slow: 'x' }]
    // More than one batch (500), so the batches' results join in order.
    const many = Array.from({ length: 1_203 }, (_, i) => paramsList[i % paramsList.length])
    const answers = await sandbox.resolveParamsMany(USER, module.compiled, module.description, many)
    assert.equal(answers.length, many.length)
    const single = await Promise.all(
      paramsList.map((params) => sandbox.resolveParams(USER, module.compiled, module.description, params).catch((error: unknown) => error)),
    )
    answers.forEach((answer, i) => {
      const expected = single[i % paramsList.length]
      if (expected instanceof AppError) {
        assert.ok(answer instanceof AppError, `${i}: ${JSON.stringify(answer)}`)
        assert.deepEqual([answer.code, answer.field, answer.message], [expected.code, expected.field, expected.message])
      } else assert.deepEqual(answer, expected)
    })
    assert.deepEqual(answers[0], { params: { fast: 5, slow: 50, allow_short: false }, warmup: 50 })
    assert.ok(answers[1] instanceof AppError)
    assert.deepEqual([answers[1].code, answers[1].field, answers[1].message], ['INVALID_PARAMETER', 'fast', 'fast must be below slow'])
  })

  it('fails them all, as a 400 on params, when the module itself fails', async () => {
    const throwing = await sandbox.inspect(USER, SMA.replace("if (p.fast >= p.slow)", "if (p.fast === 13) throw new Error('thirteen'); if (p.fast >= p.slow)"), 'javascript')
    await assert.rejects(sandbox.resolveParamsMany(USER, throwing.compiled, throwing.description, [{ fast: 5 }, { fast: 13 }]), (error: unknown) => {
      assert.ok(error instanceof AppError, String(error))
      assert.deepEqual([error.code, error.field], ['INVALID_PARAMETER', 'params'])
      assert.match(error.message, /the module failed: .*thirteen/)
      return true
    })
    // The sandbox goes on answering.
    assert.equal((await sandbox.resolveParamsMany(USER, module.compiled, module.description, [{ fast: 5 }])).length, 1)
  })
})
