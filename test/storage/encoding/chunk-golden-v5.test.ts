import t from 'tap';
import { encodeChunk, FORMAT_VERSION } from '../../../src/storage/encoding/chunk.js';
import { sectionOffsets } from '../../../src/storage/encoding/chunk-header.js';
import { toColumns } from '../../helpers/chunk-arbitraries.js';
import { GOLDEN_HEX_V4 } from '../../helpers/chunk-golden-hex-v4.js';
import { checkGoldenChunk, checkGroupDirectory, checkSameHeaderFacts, GOLDEN_RUNS, T0, V4_RUNS, V5_RUNS } from '../../helpers/chunk-golden-runs.js';

// Golden bytes pin format version 5: the version 3 header with tag 0x50, and the integer
// column's RICE_DELTA layout (FORMAT.md "Integer column"): a change to any layout shows here
// as a diff of hex. The runs are those of the earlier goldens (test/helpers/
// chunk-golden-runs.ts), so the files show what each version spends on one chunk, plus
// 'fine walk', a 0.01-resolution measurement whose differences take RICE_DELTA's zigzag
// form.
const HEX: Record<string, string> = {
  'decimal': [
      '5000002a36fe9c971709100d0505000016a21fba17a21f9a03010204000100000adab78500c0843de907000400010401',
      '05020101000100049a030102020301060100018003052fd10c0b',
    ].join(''),
  'split': [
      '5000002a36fe9c97170f092b0a030101f00301000000000000000080343333333333d33f343333333333d33f01000000',
      '00000000020000004e8769430001020002000101020100030001020101010002fa0f01f90f020002e6cc1901e5cc1902',
      '0003e8cc99b30601e7cc99b3060102010003800301ff01017f010e6d95ab',
    ].join(''),
  'int64': [
      '5100000000000000800f071605030000f00e07000000000000000080ffffffffffffff7fffffffffffffff7f00000000',
      '0000000000010000f30e9e280007010001000301feffffffffffffffff0102ffffffffffffffffff0100018003036857',
      'fdc6',
    ].join(''),
  'boolean': [
      '5200002a36fe9c9717090b080806000209050003000001008094ebdc03000000814d38b1008094ebdc03010001000600',
      '030003020201010002800304ff0202248b4530',
    ].join(''),
  'enum': [
      '5400000000000000000807080e040000020303020604020700010000198ff428006401000100040003060204010b0100',
      '02feffffff1f01fdfcffff1f0336c7ae64',
    ].join(''),
  'string': [
      '5300002a36fe9c9717070b1505040000f91e000100000000100d43490080c8afa02501000100040303422d3106c3a9f0',
      '9d849e00000300020201020100018003041c56f4d3',
    ].join(''),
  'gapped time': [
      '5100002a36fe9c97170a160c0b05000206c53e00c53ec801000a14808af7ae1601000000c3722a9a02c0843de8070002',
      '0003080200040001040101010802000004c80101020208010a010003800302ff02028003010c7d3415',
    ].join(''),
  'group directory': [
      '5000002a36fe9c9717128001ea010cac02000a36aaa712d99c0d8d2f9eb802f2011c830180b4e8ab25010803c0843da6',
      'd60f9eb802f2011cd80600c1010c400118000000c1f3733900c0843deb07040003050000df49920466a7d9f7496a8049',
      '92a406000060dff77ddf4d92e427000000603625499224350d807dcf000000b0effbbeeffb3e4905b04f9224354d4992',
      '24c9efb69da629c9e7fbbe4f902435c06edb194900eb25494d5392cfd2344d499224499224f9494d53f2939aa6694af2',
      'fb3e0000000000000003069eb8020427370000005de2c995152e693a8dd508ad18fea258f1b07a90c275d65327d1d6bf',
      '7778368bf3789e404935de9f0c8e2b3028661979134fdadfe0988d92fa1cb2a393049234539402e3726441e8ee7acfb0',
      '9bfe298c36699be78944e11a99b57ea3e886cf4863bacb327ce548baaa2893e654cd6ff1d99c9a6dd1a5a8a74a9da199',
      'a4e1507e7881f63f8fe3aa22af0a96eb569b927e2098aa4b78720c8c519d11164dacaaa07ab23848e63f44d11328fee6',
      '2833da1c6911392687e7c6e5f1289124abbc4320c8999028caa645676a04b9dbb1315c47994336672448444bcf030000',
      'd00b0003800364ff020a8003be0154bb9937',
    ].join(''),
  'noise split': [
      '5000002a36fe9c97171044e40806a0010000f69d7cc10cff5cbcd5f1afcd960ac00cdbadab57ce0a409a9999d9173cbf',
      '3f78203376cf9f04c00001003dddea7300c0843d64030305035af139bd8a2c1583732859f0d9fffff32ea9211a29c1e6',
      '5d54ccbccbc7e89dd87314a055954f859dbb80edd8c01191f41c67a85e7ca7cb0db08d9e01030100e0c187071f1e3c78',
      'f0e0c183070f1e3c78f8f0c1058080100a000000e0c903f07441a70b5d0f5d2e5e171d5d3c5dbc2e4f174f974b97a78b',
      '47d745d74397073a793400000314dc166936df23197aea46bf6a395c85509b57e3c2815ff83b22ba8ffa8f8144653145',
      '15cff4835bd5ed551f917a938f97ee060a9f22c8a7fd2d414c3b557dbe9984f54c0670d8fa4c1bf6fdbe556255136f2d',
      '9cfdb27068a04afa6e079e443578ef049858fc29683343bdbdd19e544e40bdd388c583d5cb503190b8f185a808297a55',
      '7539d32b179cba57a2cc9cd2f35a78661e9af424af99653e58008afe51aaba19748522d962deea059ef8b74275f671f4',
      'b90616f4c6d683e0081615090000e213a04e7e58a9e7ce42aad336713be17ed4a373037062692add147760862af234de',
      'b41663d04f44e839457715815f48327ded1a54e0902afb153066abbe519469d5dd0f5406a3113d8364c7a598b910f5a9',
      'eceb1e88dae56c24ff0364b9480e48b4458089f2b2e0ac1420938aacb9a4d4e422dbc62c4046a875e8e1696f73b1e113',
      '359caa2ddf32ed1d12f29ec134ae8896a907bd1dd861249d9d790313af04d65966c795bdcf82418457efc9a60c5b4467',
      '6b3006ddfbf1c6825e27003b7a1c0e1bc69c273146771e16f08856e8381fa2490320c492d6870100f8d41ed1759b46d3',
      '20e4f89ecf04a95a3d47c55f599b6902b07c94524d9f52b310da9c2f8e7df9a017368a7cd22d6b28e581b45f33342879',
      'fd003f5314d49fa81a1177a7e0ece629f553b3631f3aa33d45b595100b24f0f512479c38e6a1351f81cc67a024576ae3',
      'b062941cde6461a7d6d7e7d72c04666b50dd49b0cc992f41989d92cfac1973f3b798b4581bf833d65f2c6fa4085fb499',
      '46411253d4a44ea3ccd7c5b08d9092aca06fa604b28f115d3c4f4df52a5b645a1699b24874fa2a08e42779ae67ab93e9',
      '4cd4eec11bb3e9867265b74448b860664cc10489b4dcbd58a86b77de03554b3291a096982ead50b81d14cb03fd4b9b54',
      'a08ca662732259033d06012716db35006460ccac1e0ca8eb39d2d6610e748608d9a28047f2fdc1b539f08486cb085169',
      '8809c0b779df0476738ab53f9d27b017147bd77f56779f8005e1bc0eb1f5e92526ce59b78de9c632f99d1206cfe06b14',
      'bb3459b1228ac9cb5c9515b572fd1e1f92f9d11deb1570c401038c25eb2ed414b778f03c2cbff7976d86855fbb2c2252',
      'a80c360dd3774059cb848412794fe52ac5e36cc857b24f5238f9803aebae508c90405f53c8b4c12c9a93f75f4675e4be',
      'c828a58a752d4324264a6a60d408773b43a8efa4864a5f9f11259d574260159250362cae6a1633a3f96f93a3049b4d3d',
      'd166d7f18026d44d917c15c1000000000bd321d983e19de8c67955667b92302b1c1de34c340a3a3d232d156a383ca287',
      'd70ebd02680c1ce4195e76ee5ae6f8656607d7cb68060b167c805460504b98ab84771d3662f9b18c2f52334dd7560d03',
      '4526f5a04e9cb27bdecca18ffe4447a8c336d2ec6ed55ed305074b6f1d34b6631c8226b799ebcf8f05d4717034cab2ad',
      '73e94e1ad65bb86d00018003a0011551ac4d',
    ].join(''),
  'counter walk': [
      '5100002a36fe9c971710a401a0010690030000098f03008f0384897a00b107e20e00010800c0843d82d00f84897a00f4',
      '04fd00ee0900ba028f0000006dd5e5cb00c0843de807030301000000e1e9139cf3ccb14992dff77de0504aa28a395e9f',
      '6eab8cbb9c8afadcf79d488d078cc1a771b83eeb557e7abce8de6a5996f5c48bb78af34a3775063dc0b3f55931d4727e',
      'ba7ec0b6b7e6d84e4ea741b40fd43e1543975b0179150e6e374729893ba2b13e709bcdf4e95e5331fb60ae472aae4b92',
      '7d1850a03ad915bace60e534fe6c3456101bd148298d75f23fd5b9bedb079def822a0000000484897a030000105b516d',
      '37b2e9280a000989a58410a424519908a269011180402e10241045937144a8b1024291120275ddc4094d410940968d14',
      'bb81c232b0e2d25108584100072585b485ed0a9269b1946ca4a2a5c648a010091ab9a690286010a98425436014494280',
      '54296d304a09b2ae0457124003652532864b02429a4260894001232906032000524351ed8650620271c20a9140d34064',
      '850400000001800390034ac87c3d',
    ].join(''),
  'fine walk': [
      '5000002a36fe9c971710f0019c0106d804000026d4c724dd831e00800813001700010802c0843dffcf0f800811009e07',
      '170704ec43080900054400008bca284000c0843de80703030b000000a6cdb77f1fefeeb67b51f4a437dff4094e4d58e9',
      '0b57383862ad05621605d86d8f5a1ea0b89c35e4a7cb5bc3fef02e063027d91426acb9b52c5d194a86b5afb57cec86b7',
      '96d2156ea5635430af51242c5d040491057e22b45017bf73d4239432d15dd8593e86efb072e6f759504f71cce38d42a4',
      'eed6f2e1b7db53dd0c6102953c795787053f21258f05987ef8379f52d7b2f313d83e4c0ab4f21147e1d2c3a7820489d0',
      'de7e33691b09c9e3701727d6bbb2e6cd3cda63c03e2127d63cd66e939c279b1ffa5c7f4dbe29b515cb578ff5d2fbd881',
      '00078a5cb7f36642a4bc8f8b470000000002068008200024a6974baed25aa9e54d49ec672ba73c6dde4fcaa94f276d92',
      '7669f569a99348a6e77c5b353da59926959129f9a44cfac293d652e997da3cb3e65c967c4b65de4c86c8bb697b729ab3',
      '5939497ba464a56453b64a4bbaa9a9c9c975a7e4509e654b69b2a4d4cdbd99e9b4749f9432a5d7ad50e5b27b4a364f9f',
      '32653db9c9ec5f7ae2a42fa1a6299749e5d36c9901000000db03e20300018003d804ce76e0bd',
    ].join(''),
};

t.equal(FORMAT_VERSION, 5, 'these goldens are for format version 5');

for (const { name, run } of [...GOLDEN_RUNS, ...V4_RUNS, ...V5_RUNS]) {
  t.test(`a ${name} chunk encodes to its version 5 golden bytes, whose header states its points and which decode to them`, async (t) => {
    const cols = toColumns(run);
    t.equal(Buffer.from(encodeChunk(cols)).toString('hex'), HEX[name], 'encoding is byte for byte the golden');
    checkGoldenChunk(t, new Uint8Array(Buffer.from(HEX[name], 'hex')), run, 5);
  });
}

t.test('the fine walk golden keeps its values in RICE_DELTA, zigzagged', async (t) => {
  const bytes = Buffer.from(HEX['fine walk'], 'hex');
  const at = sectionOffsets(bytes).valuesAt;
  t.same([bytes[at], bytes[at + 1], bytes[at + 2]], [0, 2, 6], 'DECIMAL, k = 2, integer column mode 6 (RICE_DELTA)');
  // after the mode byte: svarint x[0], then the form byte with the zigzag flag
  let p = at + 3;
  while (bytes[p] & 0x80) p++;
  t.equal(bytes[p + 1] & 0x20, 0x20, 'zigzag form');
});

t.test('the group directory goldens describe their groups exactly and each group decodes alone', async (t) => {
  checkGroupDirectory(t, new Uint8Array(Buffer.from(HEX['group directory'], 'hex')), 5);
  checkGroupDirectory(t, new Uint8Array(Buffer.from(HEX['fine walk'], 'hex')), 5, 'fine walk');
});

t.test('a version 5 chunk and the version 4 chunk of the same points differ only in the tag byte and CRCs when no new layout is used', async (t) => {
  // 'group directory' (a walk of steps spread evenly over +-20) takes RICE_DELTA now: 452 -> 450 bytes
  for (const { name } of [...GOLDEN_RUNS, ...V4_RUNS].filter((r) => r.name !== 'group directory')) {
    const v4 = Buffer.from(GOLDEN_HEX_V4[name], 'hex'), v5 = Buffer.from(HEX[name], 'hex');
    t.equal(v5[0], (v4[0] & 15) | 0x50, `${name}: tag`);
    const crcAt = sectionOffsets(v5).timesAt - 4;
    for (const b of [v4, v5]) { b[0] = 0; b.fill(0, crcAt, crcAt + 4); b.fill(0, b.length - 4); }
    t.same(v5, v4, `${name}: the same bytes`);
  }
});

t.test('render\'s header view and readChunkHeader read the same facts from the version 4 and version 5 bytes of a chunk', async (t) => {
  const base = T0 - 5_000_000_000n;
  for (const name of ['decimal', 'split', 'int64', 'string', 'group directory']) {
    checkSameHeaderFacts(t, new Uint8Array(Buffer.from(GOLDEN_HEX_V4[name], 'hex')), new Uint8Array(Buffer.from(HEX[name], 'hex')), 4, name, base);
  }
});
