import Testing

@testable import JobRunnerPages

@Suite("Graph layout")
struct GraphLayoutTests {
    /// A layered graph of `count` nodes with pseudo-random needs on earlier nodes (a DAG),
    /// the same for the same seed.
    func randomDAG(count: Int, seed: UInt64) -> [(from: Int, to: Int)] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var edges: [(from: Int, to: Int)] = []
        for node in 1..<count {
            for _ in 0..<Int(next() % 3) {
                edges.append((Int(next() % UInt64(node)), node))
            }
        }
        return edges
    }

    func check(_ layout: GraphLayout, edges: [(from: Int, to: Int)]) {
        let boxes = layout.nodes + layout.placeholders
        for i in boxes.indices {
            for j in boxes.indices where j > i {
                #expect(!boxes[i].overlaps(boxes[j]), "boxes \(i) and \(j) overlap")
            }
        }
        for edge in edges { #expect(layout.layers[edge.to] > layout.layers[edge.from]) }
        for edge in layout.edges {
            // Down at every step, and each point on a box's bottom or top edge.
            for (a, b) in zip(edge.points, edge.points.dropFirst()) { #expect(b.y > a.y) }
            // No segment between layers passes through a box: between two consecutive points
            // that leave one layer and reach the next, no box lies in the band between them.
            for (a, b) in zip(edge.points, edge.points.dropFirst()) {
                for box in layout.nodes {
                    let inside = box.y < b.y && box.y + box.height > a.y
                    let crossesX = min(a.x, b.x) <= box.x + box.width && max(a.x, b.x) >= box.x
                    if inside && crossesX {
                        // Only a segment down through its own placeholder column, never a node.
                        Issue.record(
                            "an edge from \(edge.from) to \(edge.to) passes through node \(box.node ?? -1)")
                    }
                }
            }
        }
    }

    @Test("longest-path layers: a node sits one below its deepest need")
    func layers() {
        let layout = GraphLayout(count: 4, edges: [(0, 1), (1, 2), (0, 2), (0, 3)])
        #expect(layout.layers == [0, 1, 2, 1])
        // The edge 0 -> 2 skips a layer: it passes a placeholder.
        #expect(layout.placeholders.count == 1)
        #expect(layout.edges.first { $0.from == 0 && $0.to == 2 }?.points.count == 4)
    }

    @Test("no overlaps and every edge goes down, through no node, at 200 nodes")
    func properties() {
        for seed in [1, 7, 42] as [UInt64] {
            let edges = randomDAG(count: 200, seed: seed)
            let layout = GraphLayout(count: 200, edges: edges)
            check(layout, edges: edges)
            #expect(layout.droppedEdges == 0)
        }
    }

    @Test("the same input gives the same layout")
    func deterministic() {
        let edges = randomDAG(count: 120, seed: 3)
        #expect(GraphLayout(count: 120, edges: edges) == GraphLayout(count: 120, edges: edges))
    }

    @Test("barycenter sweeps remove the crossing input order makes")
    func fewerCrossings() {
        // Two chains given crossed: a0 -> b1, a1 -> b0; the sweeps straighten them.
        let layout = GraphLayout(count: 4, edges: [(0, 3), (1, 2)])
        #expect(layout.crossings == 0)
        let unswept = GraphLayout(count: 4, edges: [(0, 3), (1, 2)], sweeps: 0)
        #expect(unswept.crossings == 1)
    }

    @Test("a cycle (no run has one) still lays out, its closing edge left out")
    func cycle() {
        let layout = GraphLayout(count: 3, edges: [(0, 1), (1, 2), (2, 0)])
        #expect(layout.nodes.count == 3)
        #expect(layout.droppedEdges == 1)
    }
}

@Suite("Graph layout of independent jobs")
struct IndependentJobsLayoutTests {
    @Test("jobs with no edge go in a grid under the layers, not in one endless row")
    func grid() {
        let edges: [(from: Int, to: Int)] = [(0, 1), (1, 2)]
        let layout = GraphLayout(count: 203, edges: edges)
        #expect(layout.width < 4000)
        let boxes = layout.nodes + layout.placeholders
        for i in boxes.indices {
            for j in boxes.indices where j > i { #expect(!boxes[i].overlaps(boxes[j])) }
        }
        // Under the chain's last node.
        let chainBottom = layout.nodes[2].y + layout.nodes[2].height
        #expect(layout.nodes[3...].allSatisfy { $0.y > chainBottom })
        #expect(
            layout.nodes.allSatisfy { $0.y + $0.height <= layout.height && $0.x + $0.width <= layout.width })
    }
}
